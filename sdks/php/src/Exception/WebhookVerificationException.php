<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** A webhook whose signature, timestamp or headers do not verify, or whose body is not an event. */
class WebhookVerificationException extends \RuntimeException implements LeadProviderException
{
}

<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** Every exception the SDK throws for the service's answers and for webhooks it cannot verify. */
interface LeadProviderException extends \Throwable
{
}

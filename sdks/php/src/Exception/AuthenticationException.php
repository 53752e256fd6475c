<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** The API key is missing, malformed, unknown, revoked or expired (401). */
class AuthenticationException extends ApiException
{
}

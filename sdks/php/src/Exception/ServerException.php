<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** The service failed or is unavailable (5xx); retried before it is thrown. */
class ServerException extends ApiException
{
}

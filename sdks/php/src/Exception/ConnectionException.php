<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** No answer arrived: the connection failed or was reset (code connection_error), or the attempt timed out (timeout). status is 0. */
class ConnectionException extends ApiException
{
}

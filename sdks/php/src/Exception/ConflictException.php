<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** The state of what was asked for refuses it (409: a return already contested, a closed contest window, …). */
class ConflictException extends ApiException
{
}

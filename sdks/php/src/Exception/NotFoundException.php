<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** Nothing of this provider (in this key's mode) has that id (404). */
class NotFoundException extends ApiException
{
}

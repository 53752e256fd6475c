<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** The key may not do this (403), or the provider is inactive. */
class PermissionException extends ApiException
{
}

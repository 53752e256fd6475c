<?php

declare(strict_types=1);

namespace LeadProvider\Enums;

/** Where a lead ships: DOMESTIC or FOREIGN (overseas_type). The contract's OverseasType. */
final class OverseasType
{
    public const DOMESTIC = 'DOMESTIC';
    public const FOREIGN = 'FOREIGN';

    /** @return list<string> Every value, in the contract's order. */
    public static function values(): array
    {
        return array_values((new \ReflectionClass(self::class))->getConstants());
    }
}

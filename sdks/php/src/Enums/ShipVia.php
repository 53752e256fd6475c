<?php

declare(strict_types=1);

namespace LeadProvider\Enums;

/** How a lead ships (ship_via): DOMESTIC allows OPEN, ENCLOSED, DRIVE_AWAY; FOREIGN the others. The contract's ShipVia. */
final class ShipVia
{
    public const OPEN = 'OPEN';
    public const ENCLOSED = 'ENCLOSED';
    public const DRIVE_AWAY = 'DRIVE_AWAY';
    public const CONTAINER_20FT = 'CONTAINER_20FT';
    public const CONTAINER_40FT = 'CONTAINER_40FT';
    public const SHARED = 'SHARED';
    public const ROLLON_ROLLOFF = 'ROLLON_ROLLOFF';

    /** @return list<string> Every value, in the contract's order. */
    public static function values(): array
    {
        return array_values((new \ReflectionClass(self::class))->getConstants());
    }
}

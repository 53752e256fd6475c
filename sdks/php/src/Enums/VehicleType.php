<?php

declare(strict_types=1);

namespace LeadProvider\Enums;

/** A vehicle's type (vehicles[].type). The contract's VehicleType. */
final class VehicleType
{
    public const CAR = 'CAR';
    public const SUV = 'SUV';
    public const PICKUP = 'PICKUP';
    public const VAN = 'VAN';
    public const MINIVAN = 'MINIVAN';
    public const MOTORCYCLE = 'MOTORCYCLE';
    public const ATV = 'ATV';
    public const BOAT = 'BOAT';
    public const RV = 'RV';
    public const TRAILER = 'TRAILER';
    public const HEAVY_EQUIPMENT = 'HEAVY_EQUIPMENT';
    public const OTHER = 'OTHER';

    /** @return list<string> Every value, in the contract's order. */
    public static function values(): array
    {
        return array_values((new \ReflectionClass(self::class))->getConstants());
    }
}

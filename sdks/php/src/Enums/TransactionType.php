<?php

declare(strict_types=1);

namespace LeadProvider\Enums;

/** A balance transaction's type. The contract's TransactionType. */
final class TransactionType
{
    public const LEAD_PURCHASE = 'lead_purchase';
    public const SETTLEMENT = 'settlement';
    public const RETURN = 'return';
    public const ADJUSTMENT = 'adjustment';
    public const PAYOUT = 'payout';

    /** @return list<string> Every value, in the contract's order. */
    public static function values(): array
    {
        return array_values((new \ReflectionClass(self::class))->getConstants());
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider\Enums;

/** Why the broker returned a lead. The contract's ReturnReason. */
final class ReturnReason
{
    public const INVALID_CONTACT = 'invalid_contact';
    public const NOT_REQUESTED = 'not_requested';
    public const OUT_OF_AREA = 'out_of_area';
    public const ALREADY_SHIPPED = 'already_shipped';
    public const TEST_OR_FRAUD = 'test_or_fraud';
    public const OTHER = 'other';

    /** @return list<string> Every value, in the contract's order. */
    public static function values(): array
    {
        return array_values((new \ReflectionClass(self::class))->getConstants());
    }
}

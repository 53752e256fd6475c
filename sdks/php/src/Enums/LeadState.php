<?php

declare(strict_types=1);

namespace LeadProvider\Enums;

/** A lead's state: LEAD → QUOTE → ORDER. The contract's LeadState. */
final class LeadState
{
    public const LEAD = 'LEAD';
    public const QUOTE = 'QUOTE';
    public const ORDER = 'ORDER';

    /** @return list<string> Every value, in the contract's order. */
    public static function values(): array
    {
        return array_values((new \ReflectionClass(self::class))->getConstants());
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/**
 * The lead was not taken because it is a duplicate: `duplicate_external_id` (this provider already
 * sent a lead with this external_id; existingLead() names it) or `duplicate_lead` (the intake rules
 * refuse a lead whose phone or email matches a recent one; duplicate() says what matched).
 */
class DuplicateLeadException extends ApiException
{
    /** @return array{id: int, order_number: string}|null */
    public function existingLead(): ?array
    {
        $lead = $this->problem['existing_lead'] ?? null;
        return is_array($lead) ? $lead : null;
    }

    /** @return array<string, mixed>|null */
    public function duplicate(): ?array
    {
        $duplicate = $this->problem['duplicate'] ?? null;
        return is_array($duplicate) ? $duplicate : null;
    }

    /** @return list<array{field: string, code: string, message: string}> */
    public function errors(): array
    {
        $errors = $this->problem['errors'] ?? [];
        return is_array($errors) ? array_values($errors) : [];
    }
}

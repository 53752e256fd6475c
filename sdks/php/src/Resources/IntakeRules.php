<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** The intake rules as they apply to the key now. */
final class IntakeRules extends Resource
{
    /**
     * Caps and their use, schedule, criteria, duplicate policy (PublishedIntakeRules).
     *
     * @return array<string, mixed>
     */
    public function get(): array
    {
        return $this->transport->request('GET', '/api/v1/public/intake_rules/');
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** The provider's commercial terms, and what a lead would earn. */
final class Terms extends Resource
{
    /**
     * Prices, settlement days, the returns policy (PublishedTerms).
     *
     * @return array<string, mixed>
     */
    public function get(): array
    {
        return $this->transport->request('GET', '/api/v1/public/terms/');
    }

    /**
     * What this lead (a LeadCreate) would earn if it were sent now; nothing is stored.
     *
     * @param array<string, mixed> $lead
     * @return array<string, mixed>
     */
    public function quote(array $lead): array
    {
        return $this->transport->request('POST', '/api/v1/public/terms/quote/', body: $lead);
    }
}

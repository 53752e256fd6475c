<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** What became of the provider's leads per period. */
final class Stats extends Resource
{
    /**
     * `from`, `to` (YYYY-MM-DD), `granularity` (day, week, month), `group_by` (sub_id).
     *
     * @param array<string, mixed> $params
     * @return array<string, mixed>
     */
    public function get(array $params = []): array
    {
        return $this->transport->request('GET', '/api/v1/public/stats/', query: $params);
    }

    /**
     * The same as CSV text.
     *
     * @param array<string, mixed> $params
     */
    public function getCsv(array $params = []): string
    {
        return $this->transport->request('GET', '/api/v1/public/stats/', query: $params, accept: 'text/csv', raw: true);
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** Leads the broker returned, and contesting them. */
final class Returns extends Resource
{
    /**
     * One page: `state`, `reason`, `created_after`, `created_before`, paging.
     *
     * @param array<string, mixed> $params
     * @return array{results: list<array<string, mixed>>, next_page_token: string|null, next: string|null}
     */
    public function list(array $params = []): array
    {
        return $this->transport->request('GET', '/api/v1/public/returns/', query: $params);
    }

    /**
     * @param array<string, mixed> $params
     * @return \Generator<int, array<string, mixed>>
     */
    public function listAll(array $params = []): \Generator
    {
        return self::pages(fn (array $p) => $this->list($p), $params);
    }

    /**
     * Contests the return of this lead, once, before its deadline: `statement` and `evidence`
     * (https links: consent_certificate_url, recording_url, attachments). Returns the ProviderReturn.
     *
     * @param array<string, mixed> $contest
     * @return array<string, mixed>
     */
    public function contest(string $externalId, array $contest): array
    {
        return $this->transport->request(
            'POST',
            '/api/v1/public/leads/{external_id}/return/contest/',
            ['external_id' => self::id('external_id', $externalId)],
            body: $contest,
        );
    }
}

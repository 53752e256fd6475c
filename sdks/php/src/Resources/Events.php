<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** What happened to the provider's leads, newest first. */
final class Events extends Resource
{
    /**
     * One page: `type`, `created_after`, `page_size`, `page_token`.
     *
     * @param array<string, mixed> $params
     * @return array{results: list<array<string, mixed>>, next_page_token: string|null, next: string|null}
     */
    public function list(array $params = []): array
    {
        return $this->transport->request('GET', '/api/v1/public/events/', query: $params);
    }

    /**
     * @param array<string, mixed> $params
     * @return \Generator<int, array<string, mixed>>
     */
    public function listAll(array $params = []): \Generator
    {
        return self::pages(fn (array $p) => $this->list($p), $params);
    }
}

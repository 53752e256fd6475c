<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** The request log: what happened to each request of the key's mode. */
final class Requests extends Resource
{
    /**
     * One page: `outcome`, `code`, `status`, `external_id`, `created_after`, `created_before`, paging.
     *
     * @param array<string, mixed> $params
     * @return array{results: list<array<string, mixed>>, next_page_token: string|null, next: string|null}
     */
    public function list(array $params = []): array
    {
        return $this->transport->request('GET', '/api/v1/public/requests/', query: $params);
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
     * One request by its id (an exception's requestId).
     *
     * @return array<string, mixed>
     */
    public function get(string $requestId): array
    {
        return $this->transport->request('GET', '/api/v1/public/requests/{request_id}/', ['request_id' => self::id('request_id', $requestId)]);
    }
}

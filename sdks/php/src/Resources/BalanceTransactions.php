<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** The ledger's lines: purchases, settlements, returns, adjustments, payouts. */
final class BalanceTransactions extends Resource
{
    /**
     * One page: `type`, `created_after`, `created_before`, `external_id`, paging.
     *
     * @param array<string, mixed> $params
     * @return array{results: list<array<string, mixed>>, next_page_token: string|null, next: string|null}
     */
    public function list(array $params = []): array
    {
        return $this->transport->request('GET', '/api/v1/public/balance_transactions/', query: $params);
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

<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

use LeadProvider\Exception\ApiException;

/** The provider's leads: create, read, list. */
final class Leads extends Resource
{
    /** The fields the service stores exactly as sent: a stored lead with the same is the same submission. */
    private const SUBMISSION = [
        'first_name', 'last_name', 'email', 'phone_number', 'estimated_ship_date', 'overseas_type', 'ship_via',
    ];

    /**
     * Submits a lead (the contract's LeadCreate) and returns it as stored (LeadCreated). Safe to
     * retry: external_id is the idempotency key, so when an attempt gets no answer (or a 5xx) and a
     * later attempt is told duplicate_external_id, the lead stored by the earlier attempt is read
     * back and returned (with empty `warnings`: they were in the lost answer), provided it holds
     * this submission; a different stored lead is a DuplicateLeadException.
     *
     * @param array<string, mixed> $lead
     * @return array<string, mixed>
     */
    public function create(array $lead): array
    {
        $externalId = self::id('external_id', $lead['external_id'] ?? null);
        $recover = function (ApiException $e) use ($lead, $externalId): ?array {
            if ($e->errorCode !== 'duplicate_external_id') {
                return null;
            }
            try {
                $stored = $this->get($externalId);
            } catch (ApiException) {
                return null;
            }
            foreach (self::SUBMISSION as $field) {
                if (($lead[$field] ?? null) !== ($stored[$field] ?? null)) {
                    return null;
                }
            }
            if (count($lead['vehicles'] ?? []) !== count($stored['vehicles'])) {
                return null;
            }
            return ['warnings' => []] + $stored;
        };
        return $this->transport->request('POST', '/api/v1/public/leads/', body: $lead, recover: \Closure::fromCallable($recover));
    }

    /**
     * The provider's lead with this external_id (in the key's mode).
     *
     * @return array<string, mixed>
     */
    public function get(string $externalId): array
    {
        return $this->transport->request('GET', '/api/v1/public/leads/{external_id}/', ['external_id' => self::id('external_id', $externalId)]);
    }

    /**
     * One page of the provider's leads, newest first: `state`, `updated_after`, `page_size`, `page_token`.
     *
     * @param array<string, mixed> $params
     * @return array{results: list<array<string, mixed>>, next_page_token: string|null, next: string|null}
     */
    public function list(array $params = []): array
    {
        return $this->transport->request('GET', '/api/v1/public/leads/', query: $params);
    }

    /**
     * Every lead the filters select, page after page: `foreach ($client->leads->listAll() as $lead)`.
     *
     * @param array<string, mixed> $params
     * @return \Generator<int, array<string, mixed>>
     */
    public function listAll(array $params = []): \Generator
    {
        return self::pages(fn (array $p) => $this->list($p), $params);
    }
}

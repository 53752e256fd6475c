<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** What the broker owes the provider. */
final class Balance extends Resource
{
    /**
     * Pending, available and paid out, in cents (Balance).
     *
     * @return array<string, mixed>
     */
    public function get(): array
    {
        return $this->transport->request('GET', '/api/v1/public/balance/');
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

use LeadProvider\Transport;

/** A part of the Public API; every list also pages through everything with a generator. */
abstract class Resource
{
    public function __construct(protected readonly Transport $transport)
    {
    }

    /** Never shows the transport's key (var_dump, print_r). */
    public function __debugInfo(): array
    {
        return [];
    }

    /**
     * Every item of a cursor-paged list, page after page.
     *
     * @param \Closure(array<string, mixed>): array{results: list<array<string, mixed>>, next_page_token: string|null} $list
     * @param array<string, mixed> $params
     * @return \Generator<int, array<string, mixed>>
     */
    protected static function pages(\Closure $list, array $params): \Generator
    {
        $token = $params['page_token'] ?? null;
        do {
            $page = $list($token === null ? $params : ['page_token' => $token] + $params);
            foreach ($page['results'] as $item) {
                yield $item;
            }
            $token = $page['next_page_token'];
        } while ($token !== null);
    }

    protected static function id(string $name, mixed $value): string
    {
        if (!is_string($value) || $value === '') {
            throw new \InvalidArgumentException("$name must be a non-empty string");
        }
        return $value;
    }
}

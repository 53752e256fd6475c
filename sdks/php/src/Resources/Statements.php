<?php

declare(strict_types=1);

namespace LeadProvider\Resources;

/** The provider's monthly statements. */
final class Statements extends Resource
{
    /**
     * One page of statements, newest first.
     *
     * @param array<string, mixed> $params
     * @return array{results: list<array<string, mixed>>, next_page_token: string|null, next: string|null}
     */
    public function list(array $params = []): array
    {
        return $this->transport->request('GET', '/api/v1/public/statements/', query: $params);
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
     * One month's statement (`YYYY-MM`).
     *
     * @return array<string, mixed>
     */
    public function get(string $month): array
    {
        return $this->transport->request('GET', '/api/v1/public/statements/{month}/', ['month' => self::month($month)]);
    }

    /** One month's lines as CSV text. */
    public function getCsv(string $month): string
    {
        return $this->transport->request(
            'GET',
            '/api/v1/public/statements/{month}/',
            ['month' => self::month($month)],
            ['format' => 'csv'],
            accept: 'text/csv',
            raw: true,
        );
    }

    /** One month's statement as a PDF (bytes). */
    public function getPdf(string $month): string
    {
        return $this->transport->request(
            'GET',
            '/api/v1/public/statements/{month}/',
            ['month' => self::month($month)],
            ['format' => 'pdf'],
            accept: 'application/pdf',
            raw: true,
        );
    }

    private static function month(string $month): string
    {
        if (preg_match('/^\d{4}-(0[1-9]|1[0-2])$/', $month) !== 1) {
            throw new \InvalidArgumentException("month must be YYYY-MM, got $month");
        }
        return $month;
    }
}

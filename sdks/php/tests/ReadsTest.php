<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use PHPUnit\Framework\TestCase;

/** The events, the request log, the stats and the intake rules, read back. */
final class ReadsTest extends TestCase
{
    public function testReadsEventsRequestsStatsAndIntakeRules(): void
    {
        $client = Support::client('LP_REJECT_KEY');
        $client->leads->create(Support::lead());
        $created = iterator_to_array($client->leads->listAll(), false);
        $events = iterator_to_array($client->events->listAll(['type' => 'lead.created']), false);
        self::assertContains($created[0]['id'], array_map(static fn (array $e) => $e['data']['lead']['id'], $events));
        self::assertNotEmpty($client->events->list(['page_size' => 1])['results']);

        Support::control('POST', '/request-log/flush');
        $accepted = iterator_to_array($client->requests->listAll(['outcome' => 'accepted']), false);
        self::assertContains($created[0]['external_id'], array_column($accepted, 'external_id'));
        $newest = $client->requests->list(['page_size' => 1])['results'][0];
        self::assertSame($newest, $client->requests->get($newest['request_id']));

        $today = (new \DateTimeImmutable('now', new \DateTimeZone('America/New_York')))->format('Y-m-d');
        $yesterday = (new \DateTimeImmutable('yesterday', new \DateTimeZone('America/New_York')))->format('Y-m-d');
        $stats = $client->stats->get(['from' => $yesterday, 'to' => $today, 'granularity' => 'day']);
        self::assertGreaterThanOrEqual(1, $stats['totals']['accepted']);
        self::assertStringStartsWith('period,', $client->stats->getCsv(['from' => $yesterday, 'to' => $today]));

        $rules = $client->intakeRules->get();
        self::assertSame('reject', $rules['duplicate_policy']);
        self::assertTrue($rules['open']);
    }
}

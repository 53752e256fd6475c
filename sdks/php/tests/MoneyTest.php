<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use LeadProvider\Exception\ConflictException;
use PHPUnit\Framework\TestCase;

/** Terms, a quote, the balance, its lines, statements, and a return contested once. */
final class MoneyTest extends TestCase
{
    public function testReadsTheMoneyAndContestsAReturn(): void
    {
        $client = Support::client('LP_MONEY_KEY');
        self::assertSame(1500, $client->terms->get()['default_price_cents']);
        $lead = Support::lead();
        self::assertSame(1500, $client->terms->quote($lead)['amount_cents']);
        $created = $client->leads->create($lead);
        self::assertSame(1500, $created['price']['amount_cents']);
        $balance = $client->balance->get();
        self::assertTrue($balance['livemode']);
        self::assertGreaterThanOrEqual(1500, $balance['pending_cents']);
        $purchases = iterator_to_array($client->balanceTransactions->listAll(['type' => 'lead_purchase']), false);
        self::assertContains($created['external_id'], array_map(static fn (array $t) => $t['lead']['external_id'], $purchases));
        self::assertNotEmpty($client->balanceTransactions->list(['page_size' => 1])['results']);

        $statements = iterator_to_array($client->statements->listAll(), false);
        $month = $statements[0]['month'];
        self::assertSame($month, $client->statements->list()['results'][0]['month']);
        self::assertSame($month, $client->statements->get($month)['month']);
        self::assertStringContainsString($created['external_id'], $client->statements->getCsv($month));
        self::assertStringStartsWith('%PDF-', $client->statements->getPdf($month));

        $returned = Support::env('LP_RETURNED_EXTERNAL_ID');
        $open = iterator_to_array($client->returns->listAll(['state' => 'requested']), false);
        self::assertSame([$returned], array_map(static fn (array $r) => $r['lead']['external_id'], $open));
        self::assertCount(1, $client->returns->list()['results']);
        $contested = $client->returns->contest($returned, [
            'statement' => 'The customer asked for a quote on the phone.',
            'evidence' => ['recording_url' => 'https://calls.example.com/r/1.mp3'],
        ]);
        self::assertSame('contested', $contested['state']);
        try {
            $client->returns->contest($returned, ['statement' => 'Again']);
            self::fail('a return was contested twice');
        } catch (ConflictException $e) {
            self::assertSame('already_contested', $e->errorCode);
        }
    }
}

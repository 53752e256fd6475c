<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use LeadProvider\Exception\ConnectionException;
use PHPUnit\Framework\TestCase;

/**
 * A create whose answer is lost: the harness's proxy forwards the first create of LP_RESET_KEY and
 * of LP_RESET_ONCE_KEY to the service, waits until the service answers, and resets the connection.
 */
final class ResetTest extends TestCase
{
    public function testALostAnswerIsRetriedAndTheStoredLeadReturned(): void
    {
        $retries = [];
        $client = Support::client('LP_RESET_KEY', ['on_retry' => function (array $retry) use (&$retries): void {
            $retries[] = $retry;
        }]);
        $lead = Support::lead();
        $created = $client->leads->create($lead);
        self::assertSame($lead['external_id'], $created['external_id']);
        self::assertSame([], $created['warnings']);
        self::assertCount(1, $retries);
        self::assertSame('network', $retries[0]['reason']);
        self::assertNull($retries[0]['status']);
        self::assertSame($created['id'], $client->leads->get($lead['external_id'])['id']);
        $stored = array_filter(
            iterator_to_array($client->leads->listAll(['page_size' => 100]), false),
            static fn (array $l) => $l['external_id'] === $lead['external_id'],
        );
        self::assertCount(1, $stored);
        file_put_contents(Support::env('LP_OUT_DIR') . '/reset-external-id', $lead['external_id']);
    }

    public function testALostAnswerWithoutRetriesIsAConnectionExceptionWhoseRequestIdTheLogKnows(): void
    {
        $client = Support::client('LP_RESET_ONCE_KEY', ['max_retries' => 0]);
        $lead = Support::lead();
        try {
            $client->leads->create($lead);
            self::fail('the proxy did not lose the answer');
        } catch (ConnectionException $e) {
            self::assertSame(0, $e->status);
            self::assertSame('connection_error', $e->errorCode);
            // The service stored the lead: the request id the SDK sent finds it in the request log.
            Support::control('POST', '/request-log/flush');
            $logged = $client->requests->get($e->requestId);
            self::assertSame('accepted', $logged['outcome']);
            self::assertSame($lead['external_id'], $logged['external_id']);
        }
    }
}

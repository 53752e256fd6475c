<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use LeadProvider\Exception\NotFoundException;
use LeadProvider\Exception\RateLimitException;
use PHPUnit\Framework\TestCase;

/** A test key: test leads, moved by the sandbox, never seen by the live key. */
final class SandboxTest extends TestCase
{
    public function testATestKeyMakesTestLeadsTheSandboxMoves(): void
    {
        $sandbox = Support::client('LP_TEST_KEY');
        self::assertFalse($sandbox->livemode);
        $created = $sandbox->leads->create(Support::lead(['note_from_shipper' => 'sandbox:quote']));
        self::assertFalse($created['livemode']);
        Support::waitFor('the sandbox to quote the test lead', static fn () => $sandbox->leads->get($created['external_id'])['state'] === 'QUOTE');
        try {
            Support::client('LP_KEY')->leads->get($created['external_id']);
            self::fail('the live key sees a test lead');
        } catch (NotFoundException) {
        }
        // The sandbox's 429 (Retry-After 7) is longer than this client waits: thrown at once.
        $started = microtime(true);
        try {
            Support::client('LP_TEST_KEY', ['max_retry_wait' => 5])->leads->create(Support::lead(['note_from_shipper' => 'sandbox:rate_limited']));
            self::fail('sandbox:rate_limited was taken');
        } catch (RateLimitException $e) {
            self::assertSame(7, $e->retryAfter);
        }
        self::assertLessThan(5.0, microtime(true) - $started);
    }
}

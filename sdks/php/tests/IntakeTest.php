<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use LeadProvider\Exception\CapReachedException;
use LeadProvider\Exception\IntakeClosedException;
use LeadProvider\Exception\IntakePausedException;
use LeadProvider\Exception\RateLimitException;
use PHPUnit\Framework\TestCase;

/** The intake's refusals, and the waits the client does (and does not) do for them. */
final class IntakeTest extends TestCase
{
    protected function tearDown(): void
    {
        Support::control('POST', '/clock/reset');
    }

    public function testAFullCapAClosedScheduleAndAPauseAreThrownAtOnce(): void
    {
        $retries = [];
        $record = function (array $retry) use (&$retries): void {
            $retries[] = $retry;
        };
        $capped = Support::client('LP_CAP_KEY', ['on_retry' => $record]);
        $capped->leads->create(Support::lead());
        try {
            $capped->leads->create(Support::lead());
            self::fail('a lead over the day cap was taken');
        } catch (CapReachedException $e) {
            self::assertSame('day', $e->window());
            self::assertNotNull($e->resetsAt);
            self::assertGreaterThan(new \DateTimeImmutable(), $e->resetsAt);
            self::assertGreaterThan(0, $e->retryAfter);
        }
        try {
            Support::client('LP_CLOSED_KEY', ['on_retry' => $record])->leads->create(Support::lead());
            self::fail('a lead outside the schedule was taken');
        } catch (IntakeClosedException $e) {
            self::assertSame('intake_closed', $e->errorCode);
            self::assertGreaterThan(new \DateTimeImmutable(), $e->opensAt);
        }
        try {
            Support::client('LP_PAUSED_KEY', ['on_retry' => $record])->leads->create(Support::lead());
            self::fail('a lead was taken while intake is paused');
        } catch (IntakePausedException $e) {
            self::assertSame('Holiday week', $e->pausedReason());
            self::assertNull($e->retryAfter);
        }
        self::assertSame([], $retries);
    }

    public function testARateLimitIsWaitedOutForItsRetryAfterAndTheLeadThenTaken(): void
    {
        // The service's clock 2.5 s before the end of a minute: the retry falls in the next one.
        Support::control('POST', '/clock/before-minute-end/2500');
        $retries = [];
        $client = Support::client('LP_LIMITED_KEY', ['on_retry' => function (array $retry) use (&$retries): void {
            $retries[] = $retry;
        }]);
        $client->leads->create(Support::lead());
        $started = microtime(true);
        $created = $client->leads->create(Support::lead());
        $waited = microtime(true) - $started;
        self::assertSame('LEAD', $created['state']);
        self::assertCount(1, $retries);
        self::assertSame('rate_limited', $retries[0]['reason']);
        self::assertSame(429, $retries[0]['status']);
        // Retry-After was 3 (seconds to the minute's end, rounded up): slept at least that.
        self::assertGreaterThanOrEqual(3.0, $retries[0]['delay']);
        self::assertLessThan(3.25, $retries[0]['delay']);
        self::assertGreaterThanOrEqual($retries[0]['delay'], $waited);

        try {
            Support::client('LP_LIMITED_KEY', ['max_retries' => 0])->leads->create(Support::lead());
            self::fail('a lead over the rate limit was taken');
        } catch (RateLimitException $e) {
            self::assertSame('minute', $e->window());
            self::assertGreaterThan(0, $e->retryAfter);
        }
    }

    public function testACapIsWaitedOutOnlyWhenAsked(): void
    {
        // The service's clock 2 s before midnight in New York: the day cap resets in 2 s.
        Support::control('POST', '/clock/before-day-end/2000');
        $retries = [];
        Support::client('LP_CAP_WAIT_KEY')->leads->create(Support::lead());
        try {
            Support::client('LP_CAP_WAIT_KEY')->leads->create(Support::lead());
            self::fail('a lead over the day cap was taken');
        } catch (CapReachedException) {
        }
        $patient = Support::client('LP_CAP_WAIT_KEY', [
            'retry_intake_refusals' => true,
            'on_retry' => function (array $retry) use (&$retries): void {
                $retries[] = $retry;
            },
        ]);
        self::assertSame('LEAD', $patient->leads->create(Support::lead())['state']);
        self::assertCount(1, $retries);
        self::assertSame('cap_reached', $retries[0]['reason']);
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use LeadProvider\Client;

/**
 * What the tests share: the running service's address and the keys test/sdk-php.test.ts prepared
 * (from the environment), valid leads, and the harness's control endpoint (moves the service's
 * clock, flushes its request log, lists the webhooks its receiver got).
 *
 * LP_BASE_URL        the service; LP_PROXY_URL: a proxy in front of it that every client here uses
 * LP_KEY, LP_TEST_KEY a provider's live and test keys
 * LP_REJECT_KEY      a provider whose duplicate_policy is reject
 * LP_CAP_KEY, LP_CAP_WAIT_KEY  providers with a day cap of 1
 * LP_CLOSED_KEY      a provider whose schedule is closed now; LP_PAUSED_KEY: paused ("Holiday week")
 * LP_LIMITED_KEY     a provider limited to 1 request a minute
 * LP_RESET_KEY, LP_RESET_ONCE_KEY  providers whose first create's answer the proxy loses
 * LP_PAGING_KEY      a provider with no leads yet
 * LP_WEBHOOK_KEY, LP_WEBHOOK_SECRET  a provider whose webhook_url is the harness's receiver
 * LP_MONEY_KEY, LP_RETURNED_EXTERNAL_ID  a provider with terms, and its lead the broker returned
 * LP_PHONES          valid phone numbers no lead has yet, comma-separated
 * LP_CONTROL_URL     the harness's control endpoint
 */
final class Support
{
    private static int $phone = 0;

    public static function env(string $name): string
    {
        $value = getenv($name);
        if (!is_string($value) || $value === '') {
            throw new \RuntimeException("$name is not set: run these tests through test/sdk-php.test.ts");
        }
        return $value;
    }

    /** A client of the service through the harness's proxy. @param array<string, mixed> $options */
    public static function client(string $keyVariable, array $options = []): Client
    {
        return new Client(['api_key' => self::env($keyVariable), 'base_url' => self::env('LP_PROXY_URL')] + $options);
    }

    /**
     * A valid lead that duplicates no other (its own phone and email). @param array<string, mixed> $overrides
     * @return array<string, mixed>
     */
    public static function lead(array $overrides = []): array
    {
        if (!isset($overrides['phone_number'])) {
            $phones = explode(',', self::env('LP_PHONES'));
            if (self::$phone >= count($phones)) {
                throw new \RuntimeException('LP_PHONES has too few phone numbers for these tests');
            }
            $overrides['phone_number'] = $phones[self::$phone++];
        }
        $id = bin2hex(random_bytes(6));
        return $overrides + [
            'external_id' => "php-$id",
            'first_name' => 'Jane',
            'last_name' => 'Doe',
            'email' => "jane.$id@example.com",
            'origin_zip' => '90210',
            'destination_zip' => '10001',
            'estimated_ship_date' => gmdate('Y-m-d', time() + 20 * 86400),
            'overseas_type' => 'DOMESTIC',
            'ship_via' => 'OPEN',
            'vehicles' => [['year' => 2021, 'make' => 'Toyota', 'model' => 'Camry', 'type' => 'CAR', 'tariff' => 950, 'deposit' => 150]],
        ];
    }

    /** Asks the harness: POST /clock/…, POST /request-log/flush, GET /webhooks. */
    public static function control(string $method, string $path): mixed
    {
        $curl = curl_init(self::env('LP_CONTROL_URL') . $path);
        curl_setopt_array($curl, [CURLOPT_CUSTOMREQUEST => $method, CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 30]);
        $body = curl_exec($curl);
        $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        if (!is_string($body) || $status !== 200) {
            throw new \RuntimeException("control $method $path: $status " . curl_error($curl));
        }
        return json_decode($body, true, 512, JSON_THROW_ON_ERROR);
    }

    /** Polls `$check` every 100 ms for up to `$seconds`; fails naming `$what`. */
    public static function waitFor(string $what, callable $check, float $seconds = 20.0): mixed
    {
        $deadline = microtime(true) + $seconds;
        while (true) {
            $value = $check();
            if ($value !== null && $value !== false) {
                return $value;
            }
            if (microtime(true) > $deadline) {
                throw new \RuntimeException("gave up after $seconds s waiting for $what");
            }
            usleep(100_000);
        }
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider;

use LeadProvider\Resources\Balance;
use LeadProvider\Resources\BalanceTransactions;
use LeadProvider\Resources\Events;
use LeadProvider\Resources\IntakeRules;
use LeadProvider\Resources\Leads;
use LeadProvider\Resources\Requests;
use LeadProvider\Resources\Returns;
use LeadProvider\Resources\Statements;
use LeadProvider\Resources\Stats;
use LeadProvider\Resources\Terms;

/**
 * The client of the Lead Provider API for a provider:
 *
 *     $client = new LeadProvider\Client(['api_key' => getenv('LEAD_PROVIDER_API_KEY')]);
 *     $lead = $client->leads->create([...]);
 *
 * Options: `api_key` (required: lp_live_… or lp_test_…), `base_url` (default
 * http://localhost:8080), `timeout` (seconds per attempt, default 30), `max_retries` (default 2),
 * `max_retry_wait` (the longest Retry-After slept through, seconds, default 60),
 * `retry_intake_refusals` (also wait out cap_reached and intake_closed, default false) and
 * `on_retry` (a callable told of each retry: attempt, delay, reason, request_id, status).
 */
final class Client
{
    public const VERSION = '0.1.0';

    private const OPTIONS = [
        'api_key', 'base_url', 'timeout', 'max_retries', 'max_retry_wait', 'retry_intake_refusals', 'on_retry',
    ];

    /** true for a live key (lp_live_…), false for a test key (lp_test_…: test leads, test money). */
    public readonly bool $livemode;
    public readonly string $baseUrl;
    public readonly Leads $leads;
    public readonly Events $events;
    public readonly Requests $requests;
    public readonly Stats $stats;
    public readonly IntakeRules $intakeRules;
    public readonly Terms $terms;
    public readonly Balance $balance;
    public readonly BalanceTransactions $balanceTransactions;
    public readonly Statements $statements;
    public readonly Returns $returns;
    private readonly Transport $transport;

    /** @param array<string, mixed> $options */
    public function __construct(#[\SensitiveParameter] array $options)
    {
        $unknown = array_diff(array_keys($options), self::OPTIONS);
        if ($unknown !== []) {
            throw new \InvalidArgumentException(
                'unknown option ' . implode(', ', $unknown) . '; the options are ' . implode(', ', self::OPTIONS),
            );
        }
        $key = $options['api_key'] ?? null;
        if (!is_string($key) || preg_match('/^lp_(live|test)_[A-Za-z0-9]+$/', $key) !== 1) {
            // Never echo the value: it may be a real key with a typo.
            throw new \InvalidArgumentException('api_key must be a provider API key: lp_live_… or lp_test_… followed by letters and digits');
        }
        $this->livemode = str_starts_with($key, 'lp_live_');
        $base = $options['base_url'] ?? 'http://localhost:8080';
        if (!is_string($base) || preg_match('~^https?://[^/\s?#]+(/[^\s?#]*)?$~', $base) !== 1) {
            throw new \InvalidArgumentException('base_url must be an absolute http(s) URL, got ' . var_export($base, true));
        }
        $this->baseUrl = rtrim($base, '/');
        $onRetry = $options['on_retry'] ?? null;
        if ($onRetry !== null && !is_callable($onRetry)) {
            throw new \InvalidArgumentException('on_retry must be callable');
        }
        $retryIntakeRefusals = $options['retry_intake_refusals'] ?? false;
        if (!is_bool($retryIntakeRefusals)) {
            throw new \InvalidArgumentException('retry_intake_refusals must be true or false');
        }
        $this->transport = new Transport(
            $key,
            $this->baseUrl,
            self::number($options, 'timeout', 30.0, 0.001),
            (int) self::number($options, 'max_retries', 2, 0, true),
            self::number($options, 'max_retry_wait', 60.0, 0),
            $retryIntakeRefusals,
            $onRetry === null ? null : \Closure::fromCallable($onRetry),
        );
        $this->leads = new Leads($this->transport);
        $this->events = new Events($this->transport);
        $this->requests = new Requests($this->transport);
        $this->stats = new Stats($this->transport);
        $this->intakeRules = new IntakeRules($this->transport);
        $this->terms = new Terms($this->transport);
        $this->balance = new Balance($this->transport);
        $this->balanceTransactions = new BalanceTransactions($this->transport);
        $this->statements = new Statements($this->transport);
        $this->returns = new Returns($this->transport);
    }

    /** Never shows the key (var_dump, print_r). */
    public function __debugInfo(): array
    {
        return ['livemode' => $this->livemode, 'baseUrl' => $this->baseUrl];
    }

    /** @param array<string, mixed> $options */
    private static function number(array $options, string $name, int|float $default, float $min, bool $whole = false): float
    {
        $value = $options[$name] ?? $default;
        if (!is_int($value) && !is_float($value) || $value < $min || ($whole && !is_int($value))) {
            throw new \InvalidArgumentException(sprintf(
                '%s must be %s of at least %s, got %s',
                $name,
                $whole ? 'a whole number' : 'a number',
                $min,
                var_export($value, true),
            ));
        }
        return (float) $value;
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider;

use LeadProvider\Exception\ApiException;
use LeadProvider\Exception\ConnectionException;

/**
 * One call to the service over ext-curl, attempted until it succeeds or may not be tried again: a
 * fresh X-Request-Id and time-out per attempt; retries with exponential backoff and jitter on
 * network errors, time-outs and 5xx, and after Retry-After on 429 rate_limited. cap_reached and
 * intake_closed are retried only when the client was asked to (and only when their reset is within
 * max_retry_wait); intake_paused never (it has no reset).
 *
 * @internal Used by Client and its resources.
 */
final class Transport
{
    /** The first backoff step and the longest, in seconds. */
    public const BACKOFF_BASE = 0.5;
    public const BACKOFF_MAX = 8.0;

    /** @var \CurlHandle|null One handle, so that connections are kept alive between calls. */
    private ?\CurlHandle $curl = null;

    /**
     * @param (\Closure(array{attempt: int, delay: float, reason: string, request_id: string, status: int|null}): void)|null $onRetry
     */
    public function __construct(
        #[\SensitiveParameter] private readonly string $apiKey,
        public readonly string $baseUrl,
        public readonly float $timeout,
        public readonly int $maxRetries,
        public readonly float $maxRetryWait,
        public readonly bool $retryIntakeRefusals,
        private readonly ?\Closure $onRetry,
    ) {
    }

    /** Never shows the key (var_dump, print_r). */
    public function __debugInfo(): array
    {
        return ['baseUrl' => $this->baseUrl, 'apiKey' => substr($this->apiKey, 0, 8) . '…'];
    }

    /** Exponential backoff with equal jitter: between half and all of base·2ⁿ, capped; seconds. */
    public static function backoff(int $retry): float
    {
        $step = min(self::BACKOFF_MAX, self::BACKOFF_BASE * (2 ** $retry));
        return $step / 2 + (mt_rand() / mt_getrandmax()) * ($step / 2);
    }

    /**
     * Sends one call until it succeeds or may not be tried again; returns the decoded JSON answer
     * (or the raw body when `$raw`). `$recover` is asked, when an earlier attempt's outcome is
     * unknown (no answer, or a 5xx), whether a later refusal is in fact the call's result.
     *
     * @param array<string, string> $path Path parameters, put in `{name}` URL-encoded.
     * @param array<string, mixed> $query
     * @param array<string, mixed>|null $body
     * @param (\Closure(ApiException): mixed)|null $recover
     */
    public function request(
        string $method,
        string $template,
        array $path = [],
        array $query = [],
        ?array $body = null,
        string $accept = 'application/json',
        bool $raw = false,
        ?\Closure $recover = null,
    ): mixed {
        $url = $this->baseUrl . preg_replace_callback(
            '/\{(\w+)\}/',
            static function (array $m) use ($path): string {
                $value = $path[$m[1]] ?? null;
                if (!is_string($value) || $value === '') {
                    throw new \InvalidArgumentException("$m[1] must be a non-empty string");
                }
                return rawurlencode($value);
            },
            $template,
        );
        $query = array_filter($query, static fn ($v) => $v !== null);
        if ($query !== []) {
            $url .= '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986);
        }
        $payload = $body === null
            ? null
            : json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION);

        $uncertain = false;
        for ($retry = 0; ; $retry++) {
            $requestId = self::newRequestId();
            [$status, $headers, $answer, $errno, $error] = $this->send($method, $url, $payload, $accept, $requestId);
            if ($errno !== 0) {
                $timedOut = $errno === CURLE_OPERATION_TIMEDOUT;
                $failure = new ConnectionException(
                    $timedOut
                        ? sprintf('no answer within %s s (request %s)', $this->timeout, $requestId)
                        : sprintf('the connection failed: %s (request %s)', $error, $requestId),
                    0,
                    $timedOut ? 'timeout' : 'connection_error',
                    $requestId,
                );
                // The request may have reached the service and done its work.
                $uncertain = true;
                if ($retry >= $this->maxRetries) {
                    throw $failure;
                }
                $this->pause($retry, self::backoff($retry), $timedOut ? 'timeout' : 'network', $requestId, null);
                continue;
            }
            if ($status >= 200 && $status < 300) {
                if ($raw) {
                    return $answer;
                }
                return $answer === '' ? null : json_decode($answer, true, 512, JSON_THROW_ON_ERROR);
            }
            $exception = Errors::fromResponse($status, $headers, $answer, $requestId);
            if ($uncertain && $recover !== null) {
                $recovered = $recover($exception);
                if ($recovered !== null) {
                    return $recovered;
                }
            }
            $next = $this->retryDelay($exception, $retry);
            if ($next === null) {
                throw $exception;
            }
            if ($status >= 500) {
                $uncertain = true;
            }
            $this->pause($retry, $next[0], $next[1], $requestId, $status);
        }
    }

    /** @return array{0: float, 1: string}|null The wait (seconds) and why, or null: not tried again. */
    private function retryDelay(ApiException $e, int $retry): ?array
    {
        if ($retry >= $this->maxRetries) {
            return null;
        }
        $waited = function (string $reason) use ($e, $retry): ?array {
            if ($e->retryAfter === null) {
                return [self::backoff($retry), $reason];
            }
            // Retry-After, plus up to a quarter second so that callers told the same instant spread out.
            $seconds = $e->retryAfter + (mt_rand() / mt_getrandmax()) * 0.25;
            return $seconds <= $this->maxRetryWait ? [$seconds, $reason] : null;
        };
        if ($e->status >= 500) {
            return $waited('server_error');
        }
        if ($e->errorCode === 'rate_limited') {
            return $waited('rate_limited');
        }
        if (($e->errorCode === 'cap_reached' || $e->errorCode === 'intake_closed') && $this->retryIntakeRefusals) {
            return $e->retryAfter === null ? null : $waited($e->errorCode);
        }
        return null;
    }

    private function pause(int $retry, float $seconds, string $reason, string $requestId, ?int $status): void
    {
        if ($this->onRetry !== null) {
            ($this->onRetry)([
                'attempt' => $retry + 1,
                'delay' => $seconds,
                'reason' => $reason,
                'request_id' => $requestId,
                'status' => $status,
            ]);
        }
        usleep((int) round($seconds * 1_000_000));
    }

    /**
     * One attempt.
     *
     * @return array{0: int, 1: array<string, string>, 2: string, 3: int, 4: string} Status, headers
     *     (names in lower case), body, curl's error number (0: an answer arrived) and message.
     */
    private function send(string $method, string $url, ?string $payload, string $accept, string $requestId): array
    {
        if ($this->curl === null) {
            $handle = curl_init();
            if ($handle === false) {
                throw new \RuntimeException('curl_init failed');
            }
            $this->curl = $handle;
        }
        $curl = $this->curl;
        curl_reset($curl);
        $headers = [];
        $requestHeaders = [
            'Authorization: Bearer ' . $this->apiKey,
            'Accept: ' . $accept,
            'X-Request-Id: ' . $requestId,
            'User-Agent: lead-provider-sdk-php/' . Client::VERSION . ' PHP/' . PHP_VERSION,
            // No "Expect: 100-continue": one round trip, and the body goes with the request.
            'Expect:',
        ];
        if ($payload !== null) {
            $requestHeaders[] = 'Content-Type: application/json';
        }
        curl_setopt_array($curl, [
            CURLOPT_URL => $url,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $requestHeaders,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_TIMEOUT_MS => (int) round($this->timeout * 1000),
            CURLOPT_CONNECTTIMEOUT_MS => (int) round(min($this->timeout, 10.0) * 1000),
            CURLOPT_HEADERFUNCTION => static function ($_, string $line) use (&$headers): int {
                if (str_starts_with($line, 'HTTP/')) {
                    $headers = []; // a new answer (after a 100 Continue)
                } elseif (str_contains($line, ':')) {
                    [$name, $value] = explode(':', $line, 2);
                    $headers[strtolower(trim($name))] = trim($value);
                }
                return strlen($line);
            },
        ]);
        if ($payload !== null) {
            curl_setopt($curl, CURLOPT_POSTFIELDS, $payload);
        }
        $answer = curl_exec($curl);
        $errno = curl_errno($curl);
        if ($errno !== 0 || !is_string($answer)) {
            return [0, [], '', $errno !== 0 ? $errno : CURLE_RECV_ERROR, curl_error($curl)];
        }
        return [(int) curl_getinfo($curl, CURLINFO_RESPONSE_CODE), $headers, $answer, 0, ''];
    }

    /** A UUID of version 4 (random), the id each attempt is sent with. */
    private static function newRequestId(): string
    {
        $bytes = random_bytes(16);
        $bytes[6] = chr((ord($bytes[6]) & 0x0f) | 0x40);
        $bytes[8] = chr((ord($bytes[8]) & 0x3f) | 0x80);
        $hex = bin2hex($bytes);
        return sprintf('%s-%s-%s-%s-%s', substr($hex, 0, 8), substr($hex, 8, 4), substr($hex, 12, 4), substr($hex, 16, 4), substr($hex, 20));
    }
}

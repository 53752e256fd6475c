<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/**
 * A call that did not succeed: the base of every exception a call throws. It carries the HTTP
 * status (0 when no answer arrived), the problem's stable code, the request id (the X-Request-Id
 * the SDK sent; the service logs it, quote it when asking about a request), the whole problem
 * document and the answer's headers. getCode() is the HTTP status.
 */
class ApiException extends \RuntimeException implements LeadProviderException
{
    /** Seconds the service asked to wait (Retry-After), when it did. */
    public readonly ?int $retryAfter;

    /**
     * @param array<string, mixed>|null $problem The problem document as the service sent it.
     * @param array<string, string> $headers The answer's headers, names in lower case.
     */
    public function __construct(
        string $message,
        public readonly int $status,
        public readonly string $errorCode,
        public readonly string $requestId,
        public readonly ?array $problem = null,
        public readonly array $headers = [],
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $status, $previous);
        $header = trim($headers['retry-after'] ?? '');
        if (preg_match('/^\d+$/', $header) === 1) {
            $this->retryAfter = (int) $header;
        } else {
            $this->retryAfter = is_int($problem['retry_after'] ?? null) ? $problem['retry_after'] : null;
        }
    }

    /** The problem's human-readable detail, when there is one. */
    public function getDetail(): ?string
    {
        $detail = $this->problem['detail'] ?? null;
        return is_string($detail) ? $detail : null;
    }

    /** A member of the problem document (`window`, `resets_at`, `existing_lead`, …), or null. */
    public function member(string $name): mixed
    {
        return $this->problem[$name] ?? null;
    }
}

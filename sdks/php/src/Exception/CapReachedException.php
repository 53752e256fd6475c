<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** The provider's day, week or month cap of leads is full (429 cap_reached); nothing was stored. */
class CapReachedException extends ApiException
{
    /** When the cap's window resets. */
    public readonly ?\DateTimeImmutable $resetsAt;

    public function __construct(
        string $message,
        int $status,
        string $errorCode,
        string $requestId,
        ?array $problem = null,
        array $headers = [],
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $status, $errorCode, $requestId, $problem, $headers, $previous);
        $at = $problem['resets_at'] ?? null;
        $this->resetsAt = is_string($at) ? new \DateTimeImmutable($at) : null;
    }

    /** Which cap: `day`, `week` or `month`. */
    public function window(): ?string
    {
        $window = $this->problem['window'] ?? null;
        return is_string($window) ? $window : null;
    }
}

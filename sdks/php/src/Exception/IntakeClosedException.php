<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** Outside the provider's weekly intake schedule (429 intake_closed); nothing was stored. */
class IntakeClosedException extends ApiException
{
    /** The schedule's next opening. */
    public readonly ?\DateTimeImmutable $opensAt;

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
        $at = $problem['opens_at'] ?? null;
        $this->opensAt = is_string($at) ? new \DateTimeImmutable($at) : null;
    }
}

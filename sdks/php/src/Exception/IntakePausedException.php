<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** An administrator paused the provider's intake (429 intake_paused, no Retry-After); nothing was stored. */
class IntakePausedException extends ApiException
{
    public function pausedReason(): ?string
    {
        $reason = $this->problem['paused_reason'] ?? null;
        return is_string($reason) ? $reason : null;
    }
}

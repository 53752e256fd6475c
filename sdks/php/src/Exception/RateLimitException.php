<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** The provider's per-minute or per-day rate limit is used up (429 rate_limited); `retryAfter` says how long to wait. */
class RateLimitException extends ApiException
{
    /** Which limit: `minute` or `day`. */
    public function window(): ?string
    {
        $window = $this->problem['window'] ?? null;
        return is_string($window) ? $window : null;
    }
}

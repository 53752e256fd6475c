<?php

declare(strict_types=1);

namespace LeadProvider;

use LeadProvider\Exception\ApiException;
use LeadProvider\Exception\AuthenticationException;
use LeadProvider\Exception\CapReachedException;
use LeadProvider\Exception\ConflictException;
use LeadProvider\Exception\DuplicateLeadException;
use LeadProvider\Exception\IntakeClosedException;
use LeadProvider\Exception\IntakePausedException;
use LeadProvider\Exception\NotFoundException;
use LeadProvider\Exception\PermissionException;
use LeadProvider\Exception\RateLimitException;
use LeadProvider\Exception\ServerException;
use LeadProvider\Exception\ValidationException;

/**
 * The exception class each problem code of the contract is thrown as. The service's contract check
 * (test/contract/sdk-coverage.test.ts) fails when a code of openapi.yaml's Problem.code is missing
 * here; a code the SDK does not know yet is thrown by its status.
 */
final class Errors
{
    /** @var array<string, class-string<ApiException>> */
    public const CLASSES = [
        'validation_error' => ValidationException::class,
        'invalid_zip' => ValidationException::class,
        'outside_criteria' => ValidationException::class,
        'malformed_json' => ValidationException::class,
        'payload_too_large' => ValidationException::class,
        'unsupported_media_type' => ValidationException::class,
        'duplicate_header' => ValidationException::class,
        'invalid_host' => ValidationException::class,
        'method_not_allowed' => ValidationException::class,
        'weak_password' => ValidationException::class,
        'invite_invalid' => ValidationException::class,
        'reset_invalid' => ValidationException::class,
        'wrong_current_password' => ValidationException::class,
        'second_factor_not_started' => ValidationException::class,
        'challenge_invalid' => ValidationException::class,
        'honeypot_filled' => ValidationException::class,
        'duplicate_external_id' => DuplicateLeadException::class,
        'duplicate_lead' => DuplicateLeadException::class,
        'invalid_api_key' => AuthenticationException::class,
        'expired_api_key' => AuthenticationException::class,
        'invalid_token' => AuthenticationException::class,
        'session_required' => AuthenticationException::class,
        'sign_in_failed' => AuthenticationException::class,
        'second_factor_required' => AuthenticationException::class,
        'invalid_totp_code' => AuthenticationException::class,
        'publishable_key_required' => AuthenticationException::class,
        'publishable_key_invalid' => AuthenticationException::class,
        'secret_key_refused' => AuthenticationException::class,
        'forbidden' => PermissionException::class,
        'provider_inactive' => PermissionException::class,
        'portal_admin_required' => PermissionException::class,
        'cross_origin_refused' => PermissionException::class,
        'origin_required' => PermissionException::class,
        'origin_not_allowed' => PermissionException::class,
        'form_disabled' => PermissionException::class,
        'lead_not_found' => NotFoundException::class,
        'request_not_found' => NotFoundException::class,
        'delivery_not_found' => NotFoundException::class,
        'provider_not_found' => NotFoundException::class,
        'portal_user_not_found' => NotFoundException::class,
        'password_reset_unavailable' => NotFoundException::class,
        'return_not_found' => NotFoundException::class,
        'not_found' => NotFoundException::class,
        'zip_not_found' => NotFoundException::class,
        'consent_not_found' => NotFoundException::class,
        'webhook_not_configured' => ConflictException::class,
        'webhook_disabled' => ConflictException::class,
        'duplicate_provider_name' => ConflictException::class,
        'duplicate_portal_user_email' => ConflictException::class,
        'own_portal_account' => ConflictException::class,
        'last_portal_admin' => ConflictException::class,
        'insufficient_balance' => ConflictException::class,
        'reference_reused' => ConflictException::class,
        'not_billable' => ConflictException::class,
        'return_window_closed' => ConflictException::class,
        'already_returned' => ConflictException::class,
        'return_cap_reached' => ConflictException::class,
        'already_contested' => ConflictException::class,
        'contest_window_closed' => ConflictException::class,
        'return_decided' => ConflictException::class,
        'return_not_contested' => ConflictException::class,
        'rate_limited' => RateLimitException::class,
        'cap_reached' => CapReachedException::class,
        'intake_closed' => IntakeClosedException::class,
        'intake_paused' => IntakePausedException::class,
        'service_unavailable' => ServerException::class,
        'internal_error' => ServerException::class,
    ];

    /** @return class-string<ApiException> */
    private static function byStatus(int $status): string
    {
        return match (true) {
            $status === 401 => AuthenticationException::class,
            $status === 403 => PermissionException::class,
            $status === 404 => NotFoundException::class,
            $status === 409 => ConflictException::class,
            $status === 429 => RateLimitException::class,
            $status >= 500 => ServerException::class,
            $status >= 400 => ValidationException::class,
            default => ApiException::class,
        };
    }

    /**
     * The exception for a refusal: its class by code (else by status), its problem and request id.
     *
     * @param array<string, string> $headers Names in lower case.
     */
    public static function fromResponse(int $status, array $headers, string $body, string $sentRequestId): ApiException
    {
        $decoded = json_decode($body, true);
        $problem = is_array($decoded) && is_string($decoded['code'] ?? null) ? $decoded : null;
        $requestId = $problem !== null && is_string($problem['request_id'] ?? null)
            ? $problem['request_id']
            : ($headers['x-request-id'] ?? $sentRequestId);
        $code = $problem['code'] ?? "http_$status";
        $class = self::CLASSES[$code] ?? self::byStatus($status);
        $what = $problem['detail'] ?? $problem['title'] ?? ($body !== '' ? substr($body, 0, 200) : "HTTP $status");
        $message = sprintf('%d %s: %s (request %s)', $status, $code, $what, $requestId);
        return new $class($message, $status, $code, $requestId, $problem, $headers);
    }
}

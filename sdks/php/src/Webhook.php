<?php

declare(strict_types=1);

namespace LeadProvider;

use LeadProvider\Exception\WebhookVerificationException;

/**
 * Webhook verification as the service signs (Standard Webhooks): HMAC-SHA256 with the endpoint's
 * secret (`whsec_` + base64) over `webhook-id.webhook-timestamp.body`, base64, sent as
 * `webhook-signature: v1,<signature>` (several, space-separated, while a secret is rotated), and a
 * timestamp within five minutes of now.
 */
final class Webhook
{
    /** How far a webhook's timestamp may be from now, in seconds. */
    public const TOLERANCE = 300;

    /** Every event type a webhook carries (the contract's `webhooks`). */
    public const EVENT_TYPES = [
        'lead.created', 'lead.quoted', 'lead.ordered', 'lead.status_changed', 'intake_rules.changed', 'webhook.test',
        'terms.changed', 'payout.created', 'adjustment.created', 'lead.return_requested', 'lead.return_contested',
        'lead.return_approved', 'lead.return_denied', 'lead.return_withdrawn',
    ];

    /**
     * The event a webhook delivered (decoded JSON), once its signature and timestamp verify.
     *
     * `$payload` is the body exactly as received (`file_get_contents('php://input')`): decode it
     * only afterwards. `$headers` may be any of getallheaders(), a PSR-7 request's getHeaders(),
     * WordPress's WP_REST_Request::get_headers() or $_SERVER (HTTP_WEBHOOK_ID …); names in any case.
     *
     * @param array<string, string|list<string>> $headers
     * @return array<string, mixed>
     * @throws WebhookVerificationException when it does not verify.
     */
    public static function verify(string $payload, array $headers, #[\SensitiveParameter] string $secret, ?int $now = null): array
    {
        if (preg_match('/^whsec_([A-Za-z0-9+\/]+={0,2})$/', $secret, $m) !== 1 || ($key = base64_decode($m[1], true)) === false) {
            throw new \InvalidArgumentException("secret must be the endpoint's signing secret, whsec_ followed by base64");
        }
        $normalized = [];
        foreach ($headers as $name => $value) {
            // webhook-id, Webhook-Id, HTTP_WEBHOOK_ID ($_SERVER) and webhook_id (WordPress) alike.
            $name = str_replace('_', '-', strtolower((string) $name));
            if (str_starts_with($name, 'http-')) {
                $name = substr($name, 5);
            }
            $normalized[$name] = is_array($value) ? implode(' ', $value) : (string) $value;
        }
        $id = $normalized['webhook-id'] ?? '';
        $timestamp = $normalized['webhook-timestamp'] ?? '';
        $signatures = $normalized['webhook-signature'] ?? '';
        if ($id === '' || $timestamp === '' || $signatures === '') {
            throw new WebhookVerificationException('webhook not verified: the webhook-id, webhook-timestamp and webhook-signature headers are required');
        }
        if (preg_match('/^\d{1,12}$/', $timestamp) !== 1) {
            throw new WebhookVerificationException('webhook not verified: webhook-timestamp is not a number of seconds');
        }
        $now ??= time();
        if (abs($now - (int) $timestamp) > self::TOLERANCE) {
            throw new WebhookVerificationException('webhook not verified: its timestamp is more than 5 minutes from now');
        }
        $expected = base64_encode(hash_hmac('sha256', "$id.$timestamp.$payload", $key, true));
        $verified = false;
        foreach (explode(' ', $signatures) as $signature) {
            [$version, $value] = array_pad(explode(',', $signature, 2), 2, '');
            if ($version === 'v1' && hash_equals($expected, $value)) {
                $verified = true;
            }
        }
        if (!$verified) {
            throw new WebhookVerificationException('webhook not verified: no signature matches');
        }
        $event = json_decode($payload, true);
        if (!is_array($event) || !is_string($event['type'] ?? null)) {
            throw new WebhookVerificationException('webhook verified, but its body is not an event');
        }
        return $event;
    }
}

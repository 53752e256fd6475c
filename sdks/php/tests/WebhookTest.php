<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use LeadProvider\Exception\WebhookVerificationException;
use LeadProvider\Webhook;
use PHPUnit\Framework\TestCase;

/** A webhook the service really signed and sent to the harness's receiver, verified here. */
final class WebhookTest extends TestCase
{
    public function testVerifiesAWebhookTheServiceSignedAndRefusesAnAlteredOne(): void
    {
        $created = Support::client('LP_WEBHOOK_KEY')->leads->create(Support::lead());
        $delivery = Support::waitFor('the lead.created webhook', static function () use ($created): ?array {
            foreach (Support::control('GET', '/webhooks') as $received) {
                $body = json_decode($received['body'], true);
                if (($body['type'] ?? null) === 'lead.created' && ($body['data']['lead']['id'] ?? null) === $created['id']) {
                    return $received;
                }
            }
            return null;
        });
        $secret = Support::env('LP_WEBHOOK_SECRET');
        $event = Webhook::verify($delivery['body'], $delivery['headers'], $secret);
        self::assertSame('lead.created', $event['type']);
        self::assertSame($created['external_id'], $event['data']['lead']['external_id']);
        self::assertContains($event['type'], Webhook::EVENT_TYPES);

        // As a plain PHP handler sees the headers: $_SERVER's HTTP_WEBHOOK_ID, …
        $server = [];
        foreach ($delivery['headers'] as $name => $value) {
            $server['HTTP_' . strtoupper(str_replace('-', '_', $name))] = $value;
        }
        self::assertSame($event, Webhook::verify($delivery['body'], $server, $secret));

        $refusals = [
            'an altered body' => [str_replace($created['external_id'], 'crm-forged', $delivery['body']), $delivery['headers'], $secret, null],
            'another secret' => [$delivery['body'], $delivery['headers'], 'whsec_' . base64_encode(str_repeat('k', 32)), null],
            'no headers' => [$delivery['body'], [], $secret, null],
            'ten minutes later' => [$delivery['body'], $delivery['headers'], $secret, time() + 600],
        ];
        foreach ($refusals as $what => [$body, $headers, $key, $now]) {
            try {
                Webhook::verify($body, $headers, $key, $now);
                self::fail("verified $what");
            } catch (WebhookVerificationException $e) {
                self::assertStringStartsWith('webhook not verified', $e->getMessage(), $what);
            }
        }
    }
}

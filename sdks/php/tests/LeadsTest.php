<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use LeadProvider\Client;
use LeadProvider\Exception\ApiException;
use LeadProvider\Exception\AuthenticationException;
use LeadProvider\Exception\DuplicateLeadException;
use LeadProvider\Exception\NotFoundException;
use LeadProvider\Exception\ValidationException;
use PHPUnit\Framework\TestCase;

/** Creating and reading leads, and the refusals a create or a read can meet. */
final class LeadsTest extends TestCase
{
    public function testCreatesALeadAndReadsItBack(): void
    {
        $client = Support::client('LP_KEY');
        self::assertTrue($client->livemode);
        $lead = Support::lead(['destination_zipcode' => '10001']);
        $created = $client->leads->create($lead);
        self::assertSame($lead['external_id'], $created['external_id']);
        self::assertSame('LEAD', $created['state']);
        self::assertTrue($created['livemode']);
        self::assertSame('destination_zipcode', $created['warnings'][0]['field']);
        self::assertSame('unknown_field', $created['warnings'][0]['code']);
        $read = $client->leads->get($lead['external_id']);
        self::assertSame($created['id'], $read['id']);
        self::assertSame('Beverly Hills', $read['origin']['city']);
        $page = $client->leads->list(['state' => 'LEAD', 'page_size' => 100]);
        self::assertContains($created['id'], array_column($page['results'], 'id'));
    }

    public function testARefusedLeadIsAValidationExceptionNamingEveryFieldWithTheRequestIdTheLogKnows(): void
    {
        $client = Support::client('LP_KEY');
        try {
            $client->leads->create(Support::lead(['origin_zip' => '00000', 'overseas_type' => 'FOREIGN', 'ship_via' => 'OPEN']));
            self::fail('the lead was taken');
        } catch (ValidationException $e) {
            self::assertSame(400, $e->status);
            self::assertSame(400, $e->getCode());
            self::assertSame('validation_error', $e->errorCode);
            $fields = array_column($e->errors(), 'field');
            sort($fields);
            self::assertSame(['origin_zip', 'ship_via'], $fields);
            self::assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $e->requestId);
            self::assertSame($e->requestId, $e->problem['request_id']);
            self::assertStringContainsString($e->requestId, $e->getMessage());
            self::assertStringNotContainsString(Support::env('LP_KEY'), $e->getMessage());
            Support::control('POST', '/request-log/flush');
            $logged = $client->requests->get($e->requestId);
            self::assertSame('rejected', $logged['outcome']);
            self::assertSame('validation_error', $logged['code']);
        }
    }

    public function testDuplicatesAreDuplicateLeadExceptions(): void
    {
        $client = Support::client('LP_KEY');
        $first = $client->leads->create(Support::lead());
        try {
            $client->leads->create(Support::lead(['external_id' => $first['external_id']]));
            self::fail('a second lead with the same external_id was taken');
        } catch (DuplicateLeadException $e) {
            self::assertSame('duplicate_external_id', $e->errorCode);
            self::assertSame(['id' => $first['id'], 'order_number' => $first['order_number']], $e->existingLead());
        }
        $strict = Support::client('LP_REJECT_KEY');
        $original = $strict->leads->create(Support::lead());
        try {
            $strict->leads->create(Support::lead(['phone_number' => $original['phone_number']]));
            self::fail('a lead with a known phone was taken under duplicate_policy reject');
        } catch (DuplicateLeadException $e) {
            self::assertSame('duplicate_lead', $e->errorCode);
            self::assertContains('phone_number', $e->duplicate()['matched_on']);
        }
    }

    public function testAWrongKeyIsAnAuthenticationExceptionAndAnUnknownLeadNotFound(): void
    {
        $retries = [];
        $key = substr(Support::env('LP_KEY'), 0, -4) . 'abcd';
        $client = new Client([
            'api_key' => $key,
            'base_url' => Support::env('LP_PROXY_URL'),
            'on_retry' => function (array $retry) use (&$retries): void {
                $retries[] = $retry;
            },
        ]);
        try {
            $client->leads->get('anything');
            self::fail('a wrong key was accepted');
        } catch (AuthenticationException $e) {
            self::assertSame(401, $e->status);
            self::assertSame('invalid_api_key', $e->errorCode);
            self::assertStringNotContainsString($key, $e->getMessage());
        }
        try {
            Support::client('LP_KEY')->leads->get('no-such-lead');
            self::fail('an unknown lead was found');
        } catch (NotFoundException $e) {
            self::assertSame('lead_not_found', $e->errorCode);
            self::assertInstanceOf(ApiException::class, $e);
        }
        self::assertSame([], $retries);
    }

    public function testBadArgumentsAreClearErrorsThatNeverShowTheKey(): void
    {
        $bad = [
            [['api_key' => 'sk_live_123'], '/api_key must be a provider API key/'],
            [['api_key' => 'lp_live_abc', 'base_url' => 'localhost:8080'], '/base_url/'],
            [['api_key' => 'lp_live_abc', 'max_retries' => -1], '/max_retries/'],
            [['api_key' => 'lp_live_abc', 'max_retries' => 1.5], '/max_retries must be a whole number/'],
            [['api_key' => 'lp_live_abc', 'timeout' => 0], '/timeout/'],
            [['api_key' => 'lp_live_abc', 'retries' => 3], '/unknown option retries/'],
            [['api_key' => 'lp_live_secret value'], '/api_key/'],
        ];
        foreach ($bad as [$options, $message]) {
            try {
                new Client($options);
                self::fail('accepted ' . json_encode(array_keys($options)));
            } catch (\InvalidArgumentException $e) {
                self::assertMatchesRegularExpression($message, $e->getMessage());
                self::assertStringNotContainsString('secret value', $e->getMessage());
            }
        }
        $client = new Client(['api_key' => 'lp_live_abc123', 'base_url' => Support::env('LP_PROXY_URL')]);
        self::assertStringNotContainsString('lp_live_abc123', print_r($client, true));
        ob_start();
        var_dump($client->leads);
        self::assertStringNotContainsString('lp_live_abc123', (string) ob_get_clean());
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('external_id must be a non-empty string');
        $client->leads->get('');
    }
}

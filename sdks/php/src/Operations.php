<?php

declare(strict_types=1);

namespace LeadProvider;

/**
 * Which method calls each provider-key operation of the contract. The service's contract check
 * (test/contract/sdk-coverage.test.ts) fails when an operation of openapi.yaml secured by
 * ProviderApiKey is missing here, when a row names a path or method the contract does not have,
 * or when the method does not exist on a Client; a list's `iterate` pages through it.
 */
final class Operations
{
    /** @var array<string, array{http: string, method: string, iterate?: string}> */
    public const ALL = [
        'createLead' => ['http' => 'POST /api/v1/public/leads/', 'method' => 'leads->create'],
        'listLeads' => ['http' => 'GET /api/v1/public/leads/', 'method' => 'leads->list', 'iterate' => 'leads->listAll'],
        'getLead' => ['http' => 'GET /api/v1/public/leads/{external_id}/', 'method' => 'leads->get'],
        'listEvents' => ['http' => 'GET /api/v1/public/events/', 'method' => 'events->list', 'iterate' => 'events->listAll'],
        'listRequests' => ['http' => 'GET /api/v1/public/requests/', 'method' => 'requests->list', 'iterate' => 'requests->listAll'],
        'getRequest' => ['http' => 'GET /api/v1/public/requests/{request_id}/', 'method' => 'requests->get'],
        'getStats' => ['http' => 'GET /api/v1/public/stats/', 'method' => 'stats->get'],
        'getPublishedIntakeRules' => ['http' => 'GET /api/v1/public/intake_rules/', 'method' => 'intakeRules->get'],
        'getPublishedTerms' => ['http' => 'GET /api/v1/public/terms/', 'method' => 'terms->get'],
        'quoteLead' => ['http' => 'POST /api/v1/public/terms/quote/', 'method' => 'terms->quote'],
        'getBalance' => ['http' => 'GET /api/v1/public/balance/', 'method' => 'balance->get'],
        'listBalanceTransactions' => [
            'http' => 'GET /api/v1/public/balance_transactions/',
            'method' => 'balanceTransactions->list',
            'iterate' => 'balanceTransactions->listAll',
        ],
        'listStatements' => ['http' => 'GET /api/v1/public/statements/', 'method' => 'statements->list', 'iterate' => 'statements->listAll'],
        'getStatement' => ['http' => 'GET /api/v1/public/statements/{month}/', 'method' => 'statements->get'],
        'listOwnReturns' => ['http' => 'GET /api/v1/public/returns/', 'method' => 'returns->list', 'iterate' => 'returns->listAll'],
        'contestReturn' => ['http' => 'POST /api/v1/public/leads/{external_id}/return/contest/', 'method' => 'returns->contest'],
    ];

    /** Whether `resource->method` exists on a client. */
    public static function exists(Client $client, string $method): bool
    {
        [$resource, $name] = array_pad(explode('->', $method, 2), 2, '');
        if ($name === '' || !property_exists($client, $resource) || !(new \ReflectionProperty($client, $resource))->isPublic()) {
            return false;
        }
        return method_exists($client->{$resource}, $name) && (new \ReflectionMethod($client->{$resource}, $name))->isPublic();
    }
}

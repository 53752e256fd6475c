<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use LeadProvider\Client;
use LeadProvider\Errors;
use LeadProvider\Exception\ApiException;
use LeadProvider\Operations;
use LeadProvider\Schemas;
use PHPUnit\Framework\TestCase;

/**
 * The SDK's tables name what exists: every operation's method and iterator on a client, every
 * enum class, every exception class. (Which operations and schemas the tables must hold is checked
 * against openapi.yaml by the service's test/contract/sdk-coverage.test.ts.)
 */
final class ContractTest extends TestCase
{
    public function testEveryTableNamesWhatExists(): void
    {
        $client = new Client(['api_key' => 'lp_test_contract']);
        foreach (Operations::ALL as $operation => $row) {
            self::assertTrue(Operations::exists($client, $row['method']), "$operation: {$row['method']}");
            if (isset($row['iterate'])) {
                self::assertTrue(Operations::exists($client, $row['iterate']), "$operation: {$row['iterate']}");
            }
        }
        self::assertFalse(Operations::exists($client, 'transport->request'));
        foreach (Schemas::ENUMS as $schema => $class) {
            self::assertNotEmpty($class::values(), $schema);
        }
        foreach (Errors::CLASSES as $code => $class) {
            self::assertTrue(is_a($class, ApiException::class, true), $code);
        }
    }
}

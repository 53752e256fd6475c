<?php

// Offline, against the contract's examples: run `make mock` in the API's repository (Prism on
// http://127.0.0.1:4010), then `php examples/mock.php`. The mock accepts any key and answers each
// call with the contract's documented example.

declare(strict_types=1);

require __DIR__ . '/../autoload.php';

$client = new LeadProvider\Client([
    'api_key' => 'lp_test_mock',
    'base_url' => getenv('LEAD_PROVIDER_BASE_URL') ?: 'http://127.0.0.1:4010',
]);

$lead = $client->leads->create([
    'external_id' => 'crm-48213',
    'first_name' => 'Maria',
    'last_name' => 'Gonzalez',
    'email' => 'maria@example.com',
    'phone_number' => '+1 (310) 555-0142',
    'origin_zip' => '90210',
    'estimated_ship_date' => '2027-03-15',
    'overseas_type' => LeadProvider\Enums\OverseasType::DOMESTIC,
    'ship_via' => LeadProvider\Enums\ShipVia::ENCLOSED,
    'vehicles' => [['year' => 2022, 'make' => 'Porsche', 'model' => '911', 'type' => 'CAR', 'tariff' => 1450, 'deposit' => 200]],
]);
echo 'created ', $lead['order_number'], ' ', $lead['state'], "\n";

foreach ($client->leads->listAll(['state' => LeadProvider\Enums\LeadState::LEAD]) as $listed) {
    echo 'listed ', $listed['external_id'], "\n";
}

try {
    $client->leads->create(['external_id' => 'incomplete']);
} catch (LeadProvider\Exception\ValidationException $e) {
    echo 'refused ', $e->errorCode, ' ', implode(',', array_column($e->errors(), 'field')), "\n";
}

<?php

declare(strict_types=1);

namespace LeadProvider\Tests;

use PHPUnit\Framework\TestCase;

final class PagingTest extends TestCase
{
    public function testListAllPagesThrough250Leads(): void
    {
        $client = Support::client('LP_PAGING_KEY');
        $ids = [];
        for ($i = 0; $i < 250; $i++) {
            // One phone for all (flagged as duplicates, still stored): the pool of fresh phones is for the other tests.
            $ids[] = $client->leads->create(Support::lead(['phone_number' => '+1 (310) 555-0100']))['id'];
        }
        $seen = [];
        foreach ($client->leads->listAll(['page_size' => 100]) as $lead) {
            $seen[] = $lead['id'];
        }
        self::assertCount(250, $seen);
        self::assertSame(array_reverse($ids), $seen); // newest first
        self::assertCount(250, iterator_to_array($client->leads->listAll(['page_size' => 100])));
        self::assertSame(0, iterator_count($client->leads->listAll(['state' => 'QUOTE'])));
    }
}

<?php

declare(strict_types=1);

namespace LeadProvider;

/**
 * The contract's schemas as this SDK has them: an enum is a class of constants (ENUMS); every
 * other schema travels as an associative array with the contract's member names (SHAPES, with
 * where each is sent or returned). The service's contract check (test/contract/sdk-coverage.test.ts)
 * fails when a schema reachable from a provider-key operation or a webhook is missing here, or when
 * an enum class's constants differ from the contract's values.
 */
final class Schemas
{
    /** @var array<string, class-string> */
    public const ENUMS = [
        'OverseasType' => Enums\OverseasType::class,
        'ShipVia' => Enums\ShipVia::class,
        'VehicleType' => Enums\VehicleType::class,
        'LeadState' => Enums\LeadState::class,
        'ReturnReason' => Enums\ReturnReason::class,
        'TransactionType' => Enums\TransactionType::class,
    ];

    /** @var array<string, string> */
    public const SHAPES = [
        // Leads
        'LeadCreate' => 'leads->create($lead), terms->quote($lead)',
        'LeadCreateBase' => 'the members LeadCreate adds to',
        'LeadCreated' => 'leads->create(): the stored lead with `warnings`',
        'Lead' => 'leads->get(), leads->list() results, events and webhooks (data.lead)',
        'LeadList' => 'leads->list()',
        'LeadPrice' => 'a lead\'s `price`',
        'LeadReturnStatus' => 'a lead\'s `return`',
        'VehicleInput' => 'LeadCreate `vehicles[]`',
        'Vehicle' => 'Lead `vehicles[]`',
        'Zip' => 'a ZIP code string (12345 or 12345-6789)',
        'Location' => 'Lead `origin`, `destination`',
        'StateChange' => 'Lead `history[]`',
        'Consent' => 'LeadCreate `consent`',
        'LeadConsent' => 'Lead `consent` (for a form lead, with its consent record\'s id)',
        'Duplicate' => 'Lead `duplicate`; DuplicateLeadException::duplicate()',
        'Warning' => 'LeadCreated `warnings[]`',
        // Errors
        'Problem' => 'ApiException::$problem',
        'FieldError' => 'ValidationException::errors()',
        // Events
        'LeadEvent' => 'events->list() results',
        'EventList' => 'events->list()',
        // Intake rules
        'PublishedIntakeRules' => 'intakeRules->get()',
        'VersionedIntakeRules' => 'intakeRules->get(); events (data.intake_rules)',
        'IntakeRules' => 'the rules within VersionedIntakeRules',
        'IntakeRuleDescription' => 'PublishedIntakeRules `rules[]`',
        'Opening' => 'IntakeRules `schedule`',
        'CapUsage' => 'PublishedIntakeRules `cap_usage`',
        // Request log and stats
        'RequestLogEntry' => 'requests->get(), requests->list() results',
        'RequestLogList' => 'requests->list()',
        'Stats' => 'stats->get()',
        'StatsRow' => 'Stats `periods[]`',
        'StatsOutcomes' => 'Stats `totals`',
        // Money
        'PublishedTerms' => 'terms->get()',
        'VersionedTerms' => 'events and webhooks (data.terms)',
        'PriceRule' => 'terms `price_rules[]`',
        'PriceRuleWhen' => 'PriceRule `when`',
        'ReturnsPolicy' => 'terms `returns`',
        'Quote' => 'terms->quote()',
        'Balance' => 'balance->get()',
        'BalanceTransaction' => 'balanceTransactions->list() results',
        'BalanceTransactionList' => 'balanceTransactions->list()',
        'LedgerLead' => 'BalanceTransaction `lead`',
        'Payout' => 'events and webhooks (data.payout)',
        'Adjustment' => 'events and webhooks (data.adjustment)',
        'Statement' => 'statements->get()',
        'StatementAccount' => 'Statement `accounts`',
        'StatementTotals' => 'Statement `totals`',
        'StatementSummary' => 'statements->list() results',
        'StatementList' => 'statements->list()',
        // Returns
        'ProviderReturn' => 'returns->list() results, returns->contest()',
        'ProviderReturnList' => 'returns->list()',
        'ReturnContest' => 'returns->contest($externalId, $contest)',
        'ReturnContestShown' => 'ProviderReturn `contest`',
        'ReturnEvidence' => 'ReturnContest `evidence`',
        // Webhooks (Webhook::verify)
        'WebhookLeadEvent' => 'Webhook::verify(): lead.created, lead.quoted, lead.ordered, lead.status_changed',
        'WebhookIntakeRulesEvent' => 'Webhook::verify(): intake_rules.changed',
        'WebhookTestEvent' => 'Webhook::verify(): webhook.test',
        'WebhookMoneyEvent' => 'Webhook::verify(): terms.changed, payout.created, adjustment.created',
        'WebhookReturnEvent' => 'Webhook::verify(): lead.return_*',
    ];
}

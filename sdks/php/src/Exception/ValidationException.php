<?php

declare(strict_types=1);

namespace LeadProvider\Exception;

/** The request is invalid (validation_error, invalid_zip, outside_criteria, …): `errors` names every bad field. */
class ValidationException extends ApiException
{
    /** @return list<array{field: string, code: string, message: string}> */
    public function errors(): array
    {
        $errors = $this->problem['errors'] ?? [];
        return is_array($errors) ? array_values($errors) : [];
    }
}

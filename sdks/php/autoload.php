<?php

/*
 * The SDK without Composer: `require __DIR__ . '/path/to/sdks/php/autoload.php';` loads the
 * LeadProvider\ classes from src/ (PSR-4), as Composer's autoloader would.
 */

declare(strict_types=1);

if (PHP_VERSION_ID < 80100) {
    throw new RuntimeException('the Lead Provider SDK needs PHP 8.1 or newer; this is PHP ' . PHP_VERSION);
}
foreach (['curl', 'json', 'hash'] as $extension) {
    if (!extension_loaded($extension)) {
        throw new RuntimeException("the Lead Provider SDK needs the PHP extension ext-$extension (Debian: apt-get install php-$extension)");
    }
}

spl_autoload_register(static function (string $class): void {
    $prefix = 'LeadProvider\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});

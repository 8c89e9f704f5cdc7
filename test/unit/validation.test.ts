import { describe, expect, it } from 'vitest';
import { ArgumentValidator } from '../../activities/registry/validation.ts';
import type { JsonSchema, ToolArguments } from '../../src/contract/types/base.ts';

const weatherSchema: JsonSchema = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: { type: 'integer', minimum: 1 },
    units: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius' },
  },
  required: ['city'],
};

describe('ArgumentValidator.validate', () => {
  it('passes valid arguments and returns null', () => {
    const validator = new ArgumentValidator();
    expect(
      validator.validate('getWeather', weatherSchema, { city: 'Tokyo', units: 'fahrenheit' }),
    ).toBeNull();
  });

  it('names the tool, the missing field, the rule and the received arguments', () => {
    const validator = new ArgumentValidator();
    const error = validator.validate('getWeather', weatherSchema, { units: 'celsius' });
    expect(error).not.toBeNull();
    expect(error).toContain('Invalid arguments for tool "getWeather"');
    expect(error).toContain("must have required property 'city'");
    expect(error).toContain('[rule: required]');
    expect(error).toContain('Received arguments: {"units":"celsius"}');
  });

  it('reports a wrong type with the path and the type rule', () => {
    const validator = new ArgumentValidator();
    const error = validator.validate('getWeather', weatherSchema, { city: 42 });
    expect(error).toContain('- /city must be string [rule: type]');
    expect(error).toContain('Received arguments: {"city":42}');
  });

  it('lists the allowed values of a violated enum', () => {
    const validator = new ArgumentValidator();
    const error = validator.validate('getWeather', weatherSchema, { city: 'Oslo', units: 'kelvin' });
    expect(error).toContain('/units');
    expect(error).toContain('[rule: enum]');
    expect(error).toContain('(allowed: ["celsius","fahrenheit"])');
  });

  it('reports every problem at once, one line each', () => {
    const validator = new ArgumentValidator();
    const error = validator.validate('getWeather', weatherSchema, { days: 0, units: 'kelvin' }) ?? '';
    const problems = error.split('\n').filter((line) => line.startsWith('- '));
    expect(problems).toHaveLength(3);
    expect(error).toContain('[rule: required]');
    expect(error).toContain('/days must be >= 1 [rule: minimum]');
    expect(error).toContain('[rule: enum]');
  });

  it('writes defaults into the arguments object', () => {
    const validator = new ArgumentValidator();
    const args: ToolArguments = { city: 'Tokyo' };
    expect(validator.validate('getWeather', weatherSchema, args)).toBeNull();
    expect(args).toEqual({ city: 'Tokyo', units: 'celsius' });
  });

  it('does not overwrite a value that was given', () => {
    const validator = new ArgumentValidator();
    const args: ToolArguments = { city: 'Tokyo', units: 'fahrenheit' };
    validator.validate('getWeather', weatherSchema, args);
    expect(args.units).toBe('fahrenheit');
  });

  it('shows the arguments as received, before defaults were applied', () => {
    const validator = new ArgumentValidator();
    const args: ToolArguments = { days: 'three' };
    const error = validator.validate('getWeather', weatherSchema, args);
    expect(error).toContain('Received arguments: {"days":"three"}');
  });

  describe('formats (ajv-formats)', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        date: { type: 'string', format: 'date' },
      },
    };

    it('accepts a well-formed email and date', () => {
      const validator = new ArgumentValidator();
      expect(validator.validate('book', schema, { email: 'ada@example.com', date: '2024-02-29' })).toBeNull();
    });

    it('rejects a malformed email', () => {
      const validator = new ArgumentValidator();
      const error = validator.validate('book', schema, { email: 'not-an-email' });
      expect(error).toContain('/email must match format "email" [rule: format]');
    });

    it('rejects an impossible date', () => {
      const validator = new ArgumentValidator();
      expect(validator.validate('book', schema, { date: '2023-02-29' })).toContain(
        '/date must match format "date" [rule: format]',
      );
      expect(validator.validate('book', schema, { date: '29/02/2024' })).toContain('[rule: format]');
    });
  });

  it('gives the full path of a nested field', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        address: {
          type: 'object',
          properties: { zip: { type: 'string', pattern: '^[0-9]{5}$' } },
          required: ['zip'],
        },
      },
    };
    const validator = new ArgumentValidator();
    expect(validator.validate('ship', schema, { address: { zip: 'abc' } })).toContain(
      '- /address/zip must match pattern',
    );
    expect(validator.validate('ship', schema, { address: { zip: 12345 } })).toContain(
      '- /address/zip must be string [rule: type]',
    );
    expect(validator.validate('ship', schema, { address: {} })).toContain(
      "- /address must have required property 'zip' [rule: required]",
    );
  });

  it('labels a problem with the whole arguments object as (arguments)', () => {
    const schema: JsonSchema = { type: 'object', additionalProperties: false, properties: { a: {} } };
    const validator = new ArgumentValidator();
    const error = validator.validate('t', schema, { a: 1, b: 2 });
    expect(error).toContain('- (arguments) must NOT have additional properties [rule: additionalProperties]');
  });

  it('validates with the same schema object repeatedly, compiling it once', () => {
    const validator = new ArgumentValidator();
    const first = validator.compile(weatherSchema);
    expect(validator.compile(weatherSchema)).toBe(first);
    expect(validator.validate('getWeather', weatherSchema, { city: 'Tokyo' })).toBeNull();
    expect(validator.validate('getWeather', weatherSchema, {})).toContain('[rule: required]');
    expect(validator.validate('getWeather', weatherSchema, { city: 'Paris' })).toBeNull();
  });

  it('validates a schema with an $id more than once', () => {
    const schema: JsonSchema = { $id: 'urn:test:with-id', type: 'object', required: ['x'] };
    const validator = new ArgumentValidator();
    expect(validator.validate('t', schema, { x: 1 })).toBeNull();
    expect(validator.validate('t', schema, {})).toContain("must have required property 'x'");
  });

  it('throws when asked to validate against an invalid schema', () => {
    const validator = new ArgumentValidator();
    expect(() => validator.validate('t', { type: 'nope' }, {})).toThrow(/schema is invalid/);
  });
});

describe('ArgumentValidator.checkSchema', () => {
  it('accepts a valid schema', () => {
    const validator = new ArgumentValidator();
    expect(validator.checkSchema(weatherSchema)).toBeNull();
    expect(validator.checkSchema({ type: 'object', properties: {} })).toBeNull();
  });

  it('rejects an unknown type, naming the path and the allowed types', () => {
    const validator = new ArgumentValidator();
    const error = validator.checkSchema({ type: 'nope' });
    expect(error).not.toBeNull();
    expect(error).toContain('/type');
    expect(error).toContain('"string"');
    expect(error).toContain('"object"');
  });

  it('rejects a nested invalid schema with its path', () => {
    const validator = new ArgumentValidator();
    expect(validator.checkSchema({ type: 'object', properties: { a: { type: 'strin' } } })).toContain(
      '/properties/a/type',
    );
    expect(validator.checkSchema({ type: 'object', required: 'a' })).toContain(
      '/required must be array [rule: type]',
    );
  });

  it('rejects a schema that is not an object', () => {
    const validator = new ArgumentValidator();
    expect(validator.checkSchema('string')).toContain('[rule: type]');
    expect(validator.checkSchema(42)).toContain('[rule: type]');
  });

  // Regression: checkSchema takes `unknown` and promises the errors, but `null` makes ajv read `null.$schema`.
  it('returns an error for null instead of throwing', () => {
    const validator = new ArgumentValidator();
    let result: string | null | undefined;
    expect(() => {
      result = validator.checkSchema(null);
    }).not.toThrow();
    expect(result).toEqual(expect.any(String));
  });
});

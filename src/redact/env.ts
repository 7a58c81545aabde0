// Whether redaction is on, from the environment: apart from the redactor and its rules, which a
// command that decodes nothing never loads.

/** Whether redaction is on for this process: on unless TOOLCANON_REDACT=0 (or false / off / no). */
export function redactionFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env['TOOLCANON_REDACT'];
  return v === undefined || !/^(?:0|false|off|no)$/i.test(v.trim());
}

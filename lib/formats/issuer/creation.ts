/** Most passports one creation makes (POST /passports/batch, createPassports), all or none. */
export const MAX_PASSPORTS_PER_CREATION = 1000;

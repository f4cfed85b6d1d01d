"""SwaNN (Tillem, Bozdemir, Önen, SECRYPT 2020): Paillier + 2PC, switching between the two."""

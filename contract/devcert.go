package contract

// DevelopmentCertificateMarker marks a certificate made for local work
// (section 19). `acemq certs` writes it as the Organization (O) of every
// certificate it makes: the field certificate viewers show as whom the
// certificate was issued to, and one RabbitMQ never reads (its
// certificate login takes the CN). A connection refuses a broker
// certificate that carries it anywhere in its subject or issuer, whoever
// made it, unless development certificates are allowed.
const DevelopmentCertificateMarker = "ACEMQ DEVELOPMENT ONLY - DO NOT TRUST"

# E-mails to buyers (see locales/en/mail.ftl).
